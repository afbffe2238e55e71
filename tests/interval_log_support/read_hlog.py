"""Reads an HdrHistogram interval log with HdrHistogram_py (PyPI:
hdrhistogram), an implementation independent of stampede's, and prints one
JSON line per interval: tag, start offset, count and percentiles."""
import json
import sys

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

reference = HdrHistogram(1, 3600 * 1000 * 1000, 3)
reader = HistogramLogReader(sys.argv[1], reference)
while True:
    histogram = reader.get_next_interval_histogram()
    if histogram is None:
        break
    start_ms = histogram.get_start_time_stamp() - reader.get_start_time_sec() * 1000.0
    print(json.dumps({
        "tag": histogram.get_tag(),
        "start_ms": round(start_ms),
        "count": histogram.get_total_count(),
        "p50": histogram.get_value_at_percentile(50),
        "p99": histogram.get_value_at_percentile(99),
        "max": histogram.get_max_value(),
    }))
