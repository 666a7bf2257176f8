"""hindcast: judge forecasters on resolved prediction markets replayed at a past instant."""

__version__ = "0.1.0"
