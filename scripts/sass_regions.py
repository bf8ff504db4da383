#!/usr/bin/env python3
"""Where a kernel's instructions go, from Nsight Compute's per-SASS-instruction counts
(source_sass.csv, written by ncu_instruction_counts in scripts/gpu_common.sh).

usage: scripts/sass_regions.py source_sass.csv KERNEL_SUBSTRING N

For each kernel whose name contains KERNEL_SUBSTRING: the thread-instructions per particle (warp
instructions x 32 / N), the opcodes' shares, and its regions (runs of consecutive instructions with
the same execution count: straight-line code, so one loop body or branch arm each) costing at least
0.4 per particle, with their first instruction's index and main opcodes; then the warp stall
reasons' shares of the sampled stalls, and the instructions holding the most samples.
"""
import collections
import csv
import re
import sys


def opcode(sass):
    text = re.sub(r'^@!?U?P\w+\s+', '', sass.strip())
    return text.split()[0].split('.')[0] if text else '?'


def main(path, wanted, n):
    kernels, kernel, header = {}, None, None
    for row in csv.reader(open(path)):
        if row and row[0] == 'Kernel Name':
            kernel = row[1]
            kernels[kernel] = []
        elif row and row[0] == 'Address':
            header = row
        elif kernel and len(row) > 5:
            kernels[kernel].append(row)
    executed = header.index('Instructions Executed')
    for name, rows in kernels.items():
        if wanted not in name:
            continue
        per_particle = lambda warp_instructions: warp_instructions * 32 / n
        total = sum(int(r[executed]) for r in rows)
        print(f'{name[:100]}: {per_particle(total):.1f} instructions per particle')
        ops = collections.Counter()
        for r in rows:
            ops[opcode(r[1])] += int(r[executed])
        print('  ' + '  '.join(f'{o}:{per_particle(c):.1f}' for o, c in ops.most_common(30)))
        regions = []
        for i, r in enumerate(rows):
            count = int(r[executed])
            if not regions or regions[-1][1] != count:
                regions.append([i, count, []])
            regions[-1][2].append(opcode(r[1]))
        for first, count, body in regions:
            cost = per_particle(count * len(body))
            if cost >= 0.4:
                main_ops = collections.Counter(body).most_common(8)
                print(f'  {first:5d} len {len(body):4d} count {count:9d} per particle {cost:6.2f}  '
                      + ' '.join(f'{o}{c}' for o, c in main_ops))
        stall_columns = [i for i, h in enumerate(header) if h.startswith('stall_') and 'Not Issued' not in h]
        stalls = collections.Counter()
        for r in rows:
            for i in stall_columns:
                stalls[header[i]] += float(r[i] or 0)
        sampled = sum(stalls.values())
        if sampled:
            print('  stalls: ' + '  '.join(f'{k[6:]}:{100 * v / sampled:.1f}%' for k, v in stalls.most_common(8)))
            samples = header.index('Warp Stall Sampling (All Samples)')
            for i, r in sorted(enumerate(rows), key=lambda ir: -float(ir[1][samples] or 0))[:3]:
                print(f'  {i:5d} holds {100 * float(r[samples] or 0) / sampled:.1f}% of the samples: {r[1].strip()}')


if __name__ == '__main__':
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
