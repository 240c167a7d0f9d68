"""autodev benchmarks: overhead script, asv suite (benchmarks/benchmarks), side-by-side report."""
