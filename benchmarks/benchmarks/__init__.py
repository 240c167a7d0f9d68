"""The asv benchmark suite of autodev (see ../asv.conf.json and docs/performance.md)."""
