"""The re-run service: scheduled, incremental hindcasts as markets resolve and dumps arrive.

config (hindcast.toml) · state (the service's tables in the run database) · lock (one
instance) · logs (JSON lines) · jobs (pull, inbox, sweeps, export) · sweeps (incremental
batch series) · service (`once`, and `run` on APScheduler) · status.
"""
