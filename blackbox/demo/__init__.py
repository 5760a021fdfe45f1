"""The built-in, offline demo agent: a scripted model and three fixture tools."""
