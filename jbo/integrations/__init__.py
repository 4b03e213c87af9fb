"""jbo inside other tools. Each integration is imported on its own and needs its tool installed:

:mod:`jbo.integrations.optuna`
    ``JboSampler``: any jbo model as an Optuna sampler (``pip install "jbo[optuna]"``).
"""
