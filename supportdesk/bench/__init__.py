"""Measuring a desk on public benchmarks (tau2-bench).

Optional: `pip install 'supportdesk[tau2]'`. Nothing here is imported on the start-up path, and
tau2 itself is imported only by `bench.tau2env` when a bench command runs.
"""
