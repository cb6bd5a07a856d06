"""A two-device check\x27s peer on another host, reached through execnet (--rdma-peer-host)."""
