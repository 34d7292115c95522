"""Running an experiment: the Hydra app, experiment assembly, the engine."""
