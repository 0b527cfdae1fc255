"""Analyses and plots for roost: benchmark reports (report.py)."""
