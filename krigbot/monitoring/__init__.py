"""Watching the bot run: Prometheus metrics, a health check, and the endpoint that serves them."""

from krigbot.monitoring.metrics import Metrics, Outcome
from krigbot.monitoring.server import Health, MonitorServer

__all__ = ["Health", "Metrics", "MonitorServer", "Outcome"]
