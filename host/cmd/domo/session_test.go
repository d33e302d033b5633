package main

import (
	"testing"

	"github.com/domo-agent/domo/host/config"
)

func TestServersToStartLeavesMemoryOutWhenOff(t *testing.T) {
	servers := map[string]config.Server{
		"files":  {Name: "files", Command: "domo-files"},
		"memory": {Name: "memory", Command: "domo-memory"},
	}
	tests := []struct {
		name    string
		enabled bool
		want    bool // the memory server is disabled
	}{
		{"memory on", true, false},
		{"memory off", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Config{Servers: servers, Memory: config.Memory{Enabled: tt.enabled}}
			got := serversToStart(cfg)
			if got["memory"].Disabled != tt.want || got["files"].Disabled {
				t.Errorf("memory disabled %v, files disabled %v", got["memory"].Disabled, got["files"].Disabled)
			}
			if servers["memory"].Disabled {
				t.Error("the config's own servers were changed")
			}
		})
	}
}
