package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// The kinds of damage Verify names.
const (
	DamageEdited    = "edited"    // a line's content no longer matches its hash
	DamageDropped   = "dropped"   // lines are missing
	DamageReordered = "reordered" // lines are out of order or repeated
	DamageTorn      = "torn"      // a line was cut short
)

// Problem is the first damage Verify found.
type Problem struct {
	Seq    uint64 // the first bad sequence number
	Damage string // one of the Damage constants
	File   string
	Line   int // 1-based, within File
	Detail string
}

func (p *Problem) Error() string {
	if p.Line == 0 {
		return fmt.Sprintf("seq %d: %s: %s", p.Seq, p.Damage, p.Detail)
	}
	return fmt.Sprintf("seq %d: %s: %s (%s line %d)", p.Seq, p.Damage, p.Detail, filepath.Base(p.File), p.Line)
}

// Report is what Verify checked.
type Report struct {
	Files  []string // the log's files, oldest first
	Events uint64   // lines checked
	First  uint64   // the first sequence number
	Last   uint64   // the last intact sequence number
	Head   string   // its hash
	// Torn lists the files holding torn lines set aside by writers. They
	// are not damage: a writer crashed, and recorded the recovery in the
	// chain.
	Torn    []string
	Problem *Problem // nil when the log is intact
}

// Verify checks the whole chain of the log at path: every line's hash
// against its content, every prev against the line before, sequence
// numbers without gaps or repeats, no torn line, and the log's end against
// the head the writers recorded. It returns an error only when the log
// cannot be read; damage is reported in Report.Problem.
func Verify(path string) (Report, error) {
	r, err := verify(path)
	if err != nil || r.Problem == nil || r.Problem.Damage != DamageTorn && r.Problem.Damage != DamageDropped {
		return r, err
	}
	// A line being written looks torn, and lines cut off the end look
	// like a writer that is still at work: confirm with the writers held
	// off for a moment.
	lock := flock.New(path + ".lock")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if ok, err := lock.TryRLockContext(ctx, 5*time.Millisecond); err != nil || !ok {
		return r, nil
	}
	defer lock.Unlock()
	return verify(path)
}

func verify(path string) (Report, error) {
	var r Report
	// The head the writers recorded, read before the lines so that lines
	// appended during the scan cannot make the log look cut short.
	hseq, hhash, hok := readHead(path)
	files, err := Files(path)
	if err != nil {
		return r, err
	}
	r.Files = files
	if _, err := os.Stat(path + ".torn"); err == nil {
		r.Torn = append(r.Torn, path+".torn")
	}
	var (
		last     uint64
		lastHash []byte
		started  bool
		missing  uint64 // a gap's first seq, looked for in the rest of the log
		gapAt    uint64 // the seq found where missing was expected
		gap      *Problem
	)
	err = eachLine(path, func(file string, n int, line []byte, complete bool) error {
		if gap != nil {
			// Scan on only to tell a dropped line from a moved one.
			if seq, ok := lineSeq(line); ok && seq == missing {
				gap.Damage = DamageReordered
				gap.Detail = fmt.Sprintf("seq %d comes before seq %d", gapAt, missing)
				return errStop
			}
			return nil
		}
		bad := func(seq uint64, damage, format string, args ...any) error {
			r.Problem = &Problem{Seq: seq, Damage: damage, File: file, Line: n, Detail: fmt.Sprintf(format, args...)}
			return errStop
		}
		if !complete {
			return bad(last+1, DamageTorn, "the last line is cut short after %d bytes (a writer crashed mid-write; the next writer sets it aside)", len(line))
		}
		// A line that fails its own checks is named by its place in the
		// chain, not by the seq it claims: that may be what was edited.
		fr, err := parseFrame(line)
		if err != nil {
			return bad(last+1, DamageEdited, "the line is not an intact audit event: %v", err)
		}
		if !fr.checkHash() {
			return bad(last+1, DamageEdited, "the line's content does not match its hash")
		}
		switch {
		case !started && fr.seq != 1:
			return bad(1, DamageDropped, "the log starts at seq %d: seq 1 to %d are missing", fr.seq, fr.seq-1)
		case !started && len(fr.prev) != 0:
			return bad(fr.seq, DamageEdited, "the first line claims a predecessor")
		case started && fr.seq <= last:
			return bad(fr.seq, DamageReordered, "seq %d appears after seq %d", fr.seq, last)
		case started && fr.seq > last+1:
			missing, gapAt = last+1, fr.seq
			gap = &Problem{Seq: missing, Damage: DamageDropped, File: file, Line: n,
				Detail: fmt.Sprintf("seq %d to %d are missing before seq %d", missing, fr.seq-1, fr.seq)}
			if fr.seq == missing+1 {
				gap.Detail = fmt.Sprintf("seq %d is missing before seq %d", missing, fr.seq)
			}
			return nil
		case started && !bytes.Equal(fr.prev, lastHash):
			// Both lines pass their own hash check: one of them was
			// written by someone who recomputed its hash.
			return bad(last, DamageEdited, "seq %d does not chain to seq %d: seq %d was changed and re-hashed, or seq %d was forged", fr.seq, last, last, fr.seq)
		}
		if hok && fr.seq == hseq && string(fr.hash) != hhash {
			return bad(fr.seq, DamageEdited, "seq %d was changed and re-hashed: the writers recorded another hash for it", fr.seq)
		}
		if d, ok := recordedDamage(line, fr); ok {
			return bad(d.FirstBadSeq, d.Damage, "%s (found by a writer, recorded at seq %d)", d.Detail, fr.seq)
		}
		if !started {
			r.First, started = fr.seq, true
		}
		last, lastHash = fr.seq, append(lastHash[:0], fr.hash...)
		r.Events++
		r.Last, r.Head = last, string(lastHash)
		return nil
	})
	if err != nil {
		return r, err
	}
	if gap != nil {
		r.Problem = gap
		return r, nil
	}
	if r.Problem == nil && hok && hseq > last {
		r.Problem = &Problem{Seq: last + 1, Damage: DamageDropped, File: path,
			Detail: fmt.Sprintf("the log ends at seq %d but writers reached seq %d (%.12s…): its last lines were cut off", last, hseq, hhash)}
	}
	return r, nil
}

// recordedDamage reads the damage a writer recorded in a log_recovered
// event, if the line is one.
func recordedDamage(line []byte, fr frame) (damage, bool) {
	var d damage
	if !bytes.Contains(fr.body[:min(len(fr.body), 160)], []byte(`,"event":"log_recovered"`)) {
		return d, false
	}
	var e Event
	if json.Unmarshal(line, &e) != nil || e.Status != StatusDamaged || json.Unmarshal(e.Args, &d) != nil {
		return d, false
	}
	return d, d.Damage != ""
}
