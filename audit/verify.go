package audit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
	var r Report
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
		fr, err := parseFrame(line)
		if err != nil {
			seq, _ := lineSeq(line)
			if seq == 0 {
				seq = last + 1
			}
			return bad(seq, DamageEdited, "the line is not an intact audit event: %v", err)
		}
		if !fr.checkHash() {
			return bad(fr.seq, DamageEdited, "the line's content does not match its hash")
		}
		switch {
		case !started && fr.seq != 1 && len(fr.prev) != 0:
			return bad(1, DamageDropped, "the log starts at seq %d: seq 1 to %d are missing", fr.seq, fr.seq-1)
		case !started && fr.seq != 1:
			return bad(fr.seq, DamageEdited, "the first line has seq %d but no predecessor", fr.seq)
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
	if r.Problem == nil {
		if seq, hash, ok := readHead(path); ok && seq > last {
			r.Problem = &Problem{Seq: last + 1, Damage: DamageDropped, File: path,
				Line: 0, Detail: fmt.Sprintf("the log ends at seq %d but writers reached seq %d (%.12s…): its last lines were cut off", last, seq, hash)}
		} else if ok && seq == last && seq > 0 && hash != r.Head {
			r.Problem = &Problem{Seq: last, Damage: DamageEdited, File: path,
				Detail: fmt.Sprintf("seq %d was changed and re-hashed: the writers recorded another hash for it", last)}
		}
	}
	return r, nil
}

// lineSeq reads a line's sequence number from its prefix.
func lineSeq(line []byte) (uint64, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"seq":`))
	if !ok {
		return 0, false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	n, err := strconv.ParseUint(string(rest[:i]), 10, 64)
	return n, err == nil
}
