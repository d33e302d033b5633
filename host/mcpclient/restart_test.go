package mcpclient

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	want := []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second}
	for n, w := range want {
		if got := backoff(n); got != w {
			t.Errorf("backoff(%d) = %s, want %s", n, got, w)
		}
	}
	for _, n := range []int{8, 9, 40, 70, 1000} {
		if got := backoff(n); got != maxBackoff {
			t.Errorf("backoff(%d) = %s, want the cap %s", n, got, maxBackoff)
		}
	}
}
