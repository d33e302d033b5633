package main

import (
	"context"
	"strings"
	"testing"

	"github.com/domo-agent/domo/host/config"
	"github.com/domo-agent/domo/host/mcpclient"
)

// TestNoVoiceSaysWhy: with no voice server to use, chat gets no Voice and
// a reason the user can act on.
func TestNoVoiceSaysWhy(t *testing.T) {
	tests := []struct {
		name    string
		servers map[string]config.Server
		want    string
	}{
		{name: "not configured", servers: map[string]config.Server{}, want: "no voice server is configured"},
		{name: "disabled", servers: map[string]config.Server{"voice": {Command: "domo-voice", Disabled: true}}, want: "disabled in the config"},
		{name: "not installed", servers: map[string]config.Server{"voice": {Command: "domo-voice-not-built", Builtin: true}}, want: "domo-voice is not installed"},
		{name: "failed", servers: map[string]config.Server{"voice": {Command: "/nonexistent/domo-voice"}}, want: "the voice server did not start"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, s := range tt.servers {
				s.Name = name
				tt.servers[name] = s
			}
			sup := mcpclient.Start(context.Background(), tt.servers, mcpclient.Options{Version: version})
			defer sup.Close()
			h := &host{session: &session{sup: sup}}
			v, why := h.voice()
			if v != nil || !strings.Contains(why, tt.want) {
				t.Errorf("voice() = %v, %q; want nil and %q", v, why, tt.want)
			}
		})
	}
}
