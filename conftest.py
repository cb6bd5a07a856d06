"""Repository-level conftest: the plugin's self-tests use pytester."""

pytest_plugins = ["pytester"]
