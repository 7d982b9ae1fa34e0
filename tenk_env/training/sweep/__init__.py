"""`tenk sweep`: seeds and hyperparameters on Ray Tune, and results across seeds.

config.py reads a sweep file (``configs/sweep_*.yaml``) into its trials, each an ordinary
``tenk train`` config checked before anything runs; run.py runs the trials as Ray Tune
trials, each writing an ordinary run directory ``runs/SWEEP/TRIAL/``; report.py summarises
the finished trials per configuration across seeds with rliable (interquartile mean,
stratified bootstrap intervals, performance profiles) and plots the learning curves.
"""
