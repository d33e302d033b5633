package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parseWhen reads a --since/--until value: an age ("90s", "2h", "3d",
// "1w", "1h30m"), a keyword ("today", "yesterday", "now"), or a date and
// time in the local zone ("2026-11-21", "2026-11-21 14:05",
// "2026-11-21T14:05:00") or with an offset (RFC 3339).
func parseWhen(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "":
		return time.Time{}, nil
	case "now":
		return now, nil
	case "today":
		y, m, d := now.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, now.Location()), nil
	case "yesterday":
		y, m, d := now.Date()
		return time.Date(y, m, d-1, 0, 0, 0, 0, now.Location()), nil
	}
	if age, ok := parseAge(s); ok {
		return now.Add(-age), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{
		"2006-01-02T15:04:05", "2006-01-02 15:04:05",
		"2006-01-02T15:04", "2006-01-02 15:04",
		"2006-01-02",
	} {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: time %q: want an age like 2h or 3d, today, yesterday, or a date like 2026-11-21 14:05", errUsage, s)
}

// maxAge bounds an age: a hundred years is further back than any log.
const maxAge = 100 * 365 * 24 * time.Hour

// parseAge reads a duration, also in days (d) and weeks (w), which
// time.ParseDuration lacks: "3d", "1w2d", "1d12h".
func parseAge(s string) (time.Duration, bool) {
	var total time.Duration
	rest := s
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		if i == 0 || i == len(rest) {
			return 0, false
		}
		unit := rest[i]
		if unit != 'd' && unit != 'w' {
			// The remainder must be a Go duration: "2h", "90s", "1h30m".
			d, err := time.ParseDuration(rest)
			if err != nil || d < 0 || d > maxAge-total {
				return 0, false
			}
			return total + d, true
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil {
			return 0, false
		}
		day := 24 * time.Hour
		if unit == 'w' {
			day *= 7
		}
		add := n * float64(day)
		if add > float64(maxAge-total) {
			return 0, false
		}
		total += time.Duration(add)
		rest = rest[i+1:]
	}
	return total, true
}
