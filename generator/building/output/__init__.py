"""How a release's files reach disk: its writer's parts, their compressed twins, the worker pool."""
