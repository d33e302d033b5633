package stt

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// canned is a backend that always answers the same way.
type canned struct {
	name  string
	text  string
	err   error
	calls int
}

func (c *canned) Name() string                { return c.name }
func (c *canned) Check(context.Context) error { return c.err }
func (c *canned) Transcribe(ctx context.Context, pcm []int16, rate int) (Result, error) {
	c.calls++
	if c.err != nil {
		return Result{}, c.err
	}
	return Result{Text: c.text, Backend: c.name}, nil
}

var _ Transcriber = (*canned)(nil)

func TestChain(t *testing.T) {
	down := errors.New("connection refused")
	tests := []struct {
		name      string
		chain     []*canned
		want      string   // text, when it succeeds
		wantErr   []string // parts of the error, when all fail
		wantCalls []int
	}{
		{
			name:      "first answers",
			chain:     []*canned{{name: "a", text: "hello"}, {name: "b", text: "other"}},
			want:      "hello",
			wantCalls: []int{1, 0},
		},
		{
			name:      "first fails, second answers",
			chain:     []*canned{{name: "openai@x", err: down}, {name: "pocketsphinx", text: "hello"}},
			want:      "hello",
			wantCalls: []int{1, 1},
		},
		{
			name:      "all fail",
			chain:     []*canned{{name: "openai@x", err: down}, {name: "pocketsphinx", err: errors.New("not installed")}},
			wantErr:   []string{"openai@x: connection refused", "pocketsphinx: not installed"},
			wantCalls: []int{1, 1},
		},
		{
			name:    "empty",
			wantErr: []string{"no speech-to-text backend"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Chain
			for _, b := range tt.chain {
				c = append(c, b)
			}
			res, err := c.Transcribe(context.Background(), []int16{1, 2, 3}, 16000)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("got %+v, want an error", res)
				}
				for _, part := range tt.wantErr {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("error %q does not contain %q", err, part)
					}
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if res.Text != tt.want {
					t.Errorf("text = %q, want %q", res.Text, tt.want)
				}
			}
			for i, b := range tt.chain {
				if b.calls != tt.wantCalls[i] {
					t.Errorf("%s called %d times, want %d", b.name, b.calls, tt.wantCalls[i])
				}
			}
		})
	}
}

func TestChainErrorUnwraps(t *testing.T) {
	down := errors.New("connection refused")
	c := Chain{&canned{name: "a", err: down}, &canned{name: "b", err: &HTTPError{StatusCode: 503}}}
	_, err := c.Transcribe(context.Background(), nil, 16000)
	if !errors.Is(err, down) {
		t.Errorf("errors.Is(err, down) is false for %v", err)
	}
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != 503 {
		t.Errorf("errors.As did not find the HTTPError in %v", err)
	}
}

func TestChainStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	second := &canned{name: "b", text: "hello"}
	c := Chain{&canned{name: "a", err: context.Canceled}, second}
	if _, err := c.Transcribe(ctx, nil, 16000); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if second.calls != 0 {
		t.Error("the chain went on after its context was cancelled")
	}
}
