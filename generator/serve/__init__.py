"""Putting releases in front of clients: nginx (nginx/) and the runtime that keeps it current, the edge
code (edge/) and its deploys (deploy/), the keys file (keys/), usage and webhooks."""
