#!/usr/bin/env python3
"""Markdown tables of scripts/bench-allreduce.sh's CSVs (doc/benchmarks.md, "allreduce").

   scripts/allreduce-tables.py [DIR]   (default doc/results/allreduce) > tables.md
"""
import csv, sys, os

d = sys.argv[1] if len(sys.argv) > 1 else 'doc/results/allreduce'

def short(a):
    a = a.replace('[drop-in] ', '')
    for k, v in [('automatic: ', 'auto→'), ('reduce_broadcast(binomial', 'reduce+bcast binomial'),
                 ('reduce_broadcast(two_tree', 'reduce+bcast two_tree'), ('recursive_doubling', 'rec. doubling'),
                 ('split_allgather', 'split-allgather'), ('allgather+coalesce (PyTorch/Horovod)', 'allgather+coalesce'),
                 ('MPI_Allreduce(dense)', 'MPI_Allreduce')]:
        a = a.replace(k, v)
    if a.startswith('grouped('):
        g = a.split('groups ')[1].split(',')[0]
        return 'grouped ' + g
    return a.split('(wire')[0].split('(binomial(')[0].rstrip('(')

def rows(f):
    return list(csv.DictReader(open(os.path.join(d, f))))

def times(f, repr_kind):
    r = rows(f)
    dens = sorted({float(x['density']) for x in r})
    algos = []
    for x in r:
        if x['repr'] == repr_kind or x['algorithm'].startswith('MPI'):
            n = short(x['algorithm'])
            if n not in algos: algos.append(n)
    print('| density | ' + ' | '.join(algos) + ' |')
    print('|---' * (len(algos) + 1) + '|')
    for de in dens:
        cells = {}
        for x in r:
            if float(x['density']) == de and (x['repr'] == repr_kind or x['algorithm'].startswith('MPI')):
                cells[short(x['algorithm'])] = f"{float(x['median_ms']):.3f}"
        print(f'| {de:g} | ' + ' | '.join(cells.get(a, '') for a in algos) + ' |')

def traffic(f):
    r = rows(f)
    dens = sorted({float(x['density']) for x in r})
    algos = []
    for x in r:
        if x['repr'] == 'sparse' or x['algorithm'].startswith('MPI'):
            n = short(x['algorithm'])
            if n not in algos: algos.append(n)
    print('| density | ' + ' | '.join(algos) + ' |')
    print('|---' * (len(algos) + 1) + '|')
    for de in dens:
        cells = {}
        for x in r:
            if float(x['density']) == de and (x['repr'] == 'sparse' or x['algorithm'].startswith('MPI')):
                cells[short(x['algorithm'])] = f"{float(x['bytes'])/1e6:.3g} MB / {int(float(x['messages']))}"
        print(f'| {de:g} | ' + ' | '.join(cells.get(a, '') for a in algos) + ' |')

print('P = 2, C = 2^18 doubles, uniform supports, sparse in and out (index_value_vector); median ms of the slowest rank:\n')
times('p2.csv', 'sparse')
print('\nThe same with the dense drop-in (std::span in and out):\n')
times('p2.csv', 'dense')
print('\nP = 2, zipf supports, sparse in and out:\n')
times('p2_zipf.csv', 'sparse')
for p in (4, 8):
    print(f'\nP = {p}, C = 2^18: bytes sent (all ranks) / messages:\n')
    traffic(f'p{p}.csv')
