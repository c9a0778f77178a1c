"""A Liger table of N rows from a sample: the sample's rows in turn, each with an x value of its
own (100000 + its index), so that every row is a new run and workload.

    liger_rows.py SAMPLE.csv OUT.csv N"""
import csv, sys

rows = list(csv.reader(open(sys.argv[1], newline="")))
head, body = rows[0], rows[1:]
x = head.index("x_value")
with open(sys.argv[2], "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(head)
    for i in range(int(sys.argv[3])):
        r = list(body[i % len(body)])
        r[x] = str(100000 + i)
        w.writerow(r)
