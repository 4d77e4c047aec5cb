"""Build the country risk API: load CSVs, score, render, validate, publish."""
