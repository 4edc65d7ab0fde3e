#!/usr/bin/env python3
"""Markdown tables of scripts/bench-allreduce.sh's CSVs (doc/benchmarks.md,
"allreduce"; doc/allreduce.md): the headline (p2_c21.csv) and the sweep
(p2.csv, p2_zipf.csv, p4.csv, p8.csv), where the files exist.

   scripts/allreduce-tables.py [DIR]   (default doc/results/allreduce) > tables.md
"""
import csv, sys, os, statistics

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

def headline(f):
    """P = 2, 2^21: per density the median over rounds of each row's median ms; in brackets the
    median over rounds of MPI_Allreduce's median over the row's in the same round."""
    t, algo = {}, {}
    for x in rows(f):
        if x['ok'] != '1':
            sys.exit(f"{f}: {x['algorithm']} at density {x['density']} differs from MPI_Allreduce")
        a = x['algorithm']
        key = ('MPI' if a.startswith('MPI') else 'allgather' if a.startswith('allgather') else
               'dropin' if a.startswith('[drop-in]') else 'sparse')
        k = (key, float(x['density']))
        t.setdefault(k, []).append(float(x['median_ms']))  # in round order
        if key in ('sparse', 'dropin'):
            algo.setdefault(k, set()).add(short(a.replace('automatic: ', '')))
    n = max(len(v) for v in t.values())
    print(f'P = 2, C = 2^21 doubles, +, uniform supports; ms (median of {n} rounds); '
          'in brackets how many times faster than MPI_Allreduce in the same round:\n')
    print('| density | MPI_Allreduce (dense) | allgather + coalesce | allreduce [index_value_vector] | '
          'allreduce, drop-in [span] | automatic took |')
    print('|---|---|---|---|---|---|')
    for de in sorted({k[1] for k in t}):
        mpi = t.get(('MPI', de), [])
        def cell(key):
            k = (key, de)
            if k not in t: return ''
            m = statistics.median(t[k])
            if key == 'MPI' or not mpi: return f'{m:.3g}'
            x = statistics.median(a / b for a, b in zip(mpi, t[k]))
            return f'{m:.3g} ({x:.0f}×)' if x >= 100 else f'{m:.3g} ({x:.3g}×)' if x >= 10 else f'{m:.3g} ({x:.2f}×)'
        sp, dr = (', '.join(sorted(algo.get((k, de), set()))) for k in ('sparse', 'dropin'))
        took = sp if sp == dr else f'{sp}; drop-in: {dr}'
        print(f'| {de * 100:g} % | ' + ' | '.join(cell(k) for k in ('MPI', 'allgather', 'sparse', 'dropin')) + f' | {took} |')
    print()

if os.path.exists(os.path.join(d, 'p2_c21.csv')):
    headline('p2_c21.csv')
if not os.path.exists(os.path.join(d, 'p2.csv')):
    sys.exit(0)
print('P = 2, C = 2^18 doubles, uniform supports, sparse in and out (index_value_vector); median ms of the slowest rank:\n')
times('p2.csv', 'sparse')
print('\nThe same with the dense drop-in (std::span in and out):\n')
times('p2.csv', 'dense')
print('\nP = 2, zipf supports, sparse in and out:\n')
times('p2_zipf.csv', 'sparse')
for p in (4, 8):
    print(f'\nP = {p}, C = 2^18: bytes sent (all ranks) / messages:\n')
    traffic(f'p{p}.csv')
