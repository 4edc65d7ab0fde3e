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

def table(f, keep, cell):
    """One row per density, one column per algorithm of the rows `keep` accepts."""
    r = [x for x in rows(f) if keep(x) or x['algorithm'].startswith('MPI')]
    algos = []
    for x in r:
        if short(x['algorithm']) not in algos: algos.append(short(x['algorithm']))
    print('| density | ' + ' | '.join(algos) + ' |')
    print('|---' * (len(algos) + 1) + '|')
    for de in sorted({float(x['density']) for x in r}):
        cells = {short(x['algorithm']): cell(x) for x in r if float(x['density']) == de}
        print(f'| {de:g} | ' + ' | '.join(cells.get(a, '') for a in algos) + ' |')

def times(f, repr_kind):
    table(f, lambda x: x['repr'] == repr_kind, lambda x: f"{float(x['median_ms']):.3f}")

def traffic(f):
    table(f, lambda x: x['repr'] == 'sparse', lambda x: f"{float(x['bytes'])/1e6:.3g} MB / {int(float(x['messages']))}")

print('P = 2, C = 2^18 doubles, uniform supports, sparse in and out (index_value_vector); median ms of the slowest rank:\n')
times('p2.csv', 'sparse')
print('\nThe same with the dense drop-in (std::span in and out):\n')
times('p2.csv', 'dense')
print('\nP = 2, zipf supports, sparse in and out:\n')
times('p2_zipf.csv', 'sparse')
for p in (4, 8):
    print(f'\nP = {p}, C = 2^18: bytes sent (all ranks) / messages:\n')
    traffic(f'p{p}.csv')
