package server

// runtimeConfig holds the CONFIG GET/SET parameters. Guarded by the engine lock.
type runtimeConfig struct {
	params map[string]string
}

func newRuntimeConfig() *runtimeConfig {
	return &runtimeConfig{params: map[string]string{}}
}
