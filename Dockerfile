# Krigbot in a container: docs/self-hosting.md, "Running in a container".
#   docker build -t krigbot .      (podman: podman build --format docker -t krigbot .)
# BASE is any Debian-based image with Python 3.11 or newer and its venv module.
ARG BASE=python:3.11-slim-bookworm
FROM ${BASE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# The bot runs as its own user; its database lives on the volume /data, which it owns.
RUN useradd --user-group --uid 10001 --no-create-home --home-dir /data --shell /usr/sbin/nologin krigbot \
    && install -d -o krigbot -g krigbot -m 0750 /data

# The requirements before the code: a change of the code reuses this layer.
COPY requirements.txt /app/requirements.txt
RUN python3 -m venv /opt/venv && /opt/venv/bin/pip install -q -r /app/requirements.txt

COPY bot.py /app/bot.py
COPY krigbot /app/krigbot

WORKDIR /app
ENV PATH=/opt/venv/bin:$PATH \
    KRIG_DB=/data/krig.db \
    KRIG_METRICS_PORT=9108 \
    KRIG_METRICS_HOST=0.0.0.0
VOLUME ["/data"]
EXPOSE 9108
USER krigbot

# /healthz answers 200 while the bot is connected to Discord and the database takes writes.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ['KRIG_METRICS_PORT'] + '/healthz', timeout=4)"]

# SIGTERM lets the bot finish the writes under way, close the database and log out.
STOPSIGNAL SIGTERM
CMD ["python", "bot.py"]
