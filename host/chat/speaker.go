package chat

import (
	"context"
	"regexp"
	"strings"
	"sync"

	"github.com/domo-agent/domo/internal/sentences"
)

// reCitation matches the citations the host asks answers to carry ([1],
// [m12], [2, 3]): they are for the eye, not the ear.
var reCitation = regexp.MustCompile(`\s*\[m?\d+(?:,\s*m?\d+)*\]`)

// speaker speaks an answer while it streams: the deltas are cut into
// sentences, made plain text, and queued; its goroutine speaks what is
// queued, in order, one Voice.Speak call at a time, taking together the
// sentences that came while the last call played. Stop drops the queue and
// cuts the call that plays.
type speaker struct {
	voice Voice
	split sentences.Splitter // used only by Add and Close, on one goroutine

	mu      sync.Mutex
	queue   []string
	closed  bool               // no more text will come
	stopped bool               // Stop was called, or a call failed
	cancel  context.CancelFunc // cancels the call that plays; nil when none
	err     error              // the first failed call's error
	more    chan struct{}      // wakes the goroutine (buffered: one wake is enough)
	done    chan struct{}      // closed when the goroutine ends
}

// startSpeaker returns a speaker whose calls run under ctx: cancelling it
// ends the speech.
func startSpeaker(ctx context.Context, v Voice) *speaker {
	s := &speaker{voice: v, more: make(chan struct{}, 1), done: make(chan struct{})}
	go s.run(ctx)
	return s
}

// Add feeds a delta of the answer.
func (s *speaker) Add(delta string) {
	for _, sentence := range s.split.Add(delta) {
		s.push(sentence)
	}
}

// Close says the answer is complete: the rest is queued and the goroutine
// ends once the queue is spoken.
func (s *speaker) Close() {
	s.push(s.split.Flush())
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.wake()
}

// push queues one sentence as plain text.
func (s *speaker) push(sentence string) {
	text := strings.TrimSpace(sentences.ForSpeech(reCitation.ReplaceAllString(sentence, "")))
	if text == "" {
		return
	}
	s.mu.Lock()
	if !s.stopped {
		s.queue = append(s.queue, text)
	}
	s.mu.Unlock()
	s.wake()
}

func (s *speaker) wake() {
	select {
	case s.more <- struct{}{}:
	default:
	}
}

// Stop drops what is queued, cuts the call that plays and speaks nothing
// more. It reports whether this call stopped it.
func (s *speaker) Stop() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return false
	}
	s.stopped, s.queue = true, nil
	if s.cancel != nil {
		s.cancel()
	}
	s.wake()
	return true
}

// Speaking reports whether something is being spoken or waits to be.
func (s *speaker) Speaking() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.stopped && (s.cancel != nil || len(s.queue) > 0)
}

// Wait returns once everything queued is spoken, or speech stopped; the
// error is that of a call that failed.
func (s *speaker) Wait() error {
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *speaker) run(ctx context.Context) {
	defer close(s.done)
	for {
		text, ok := s.next(ctx)
		if !ok {
			return
		}
		callCtx, cancel := context.WithCancel(ctx)
		s.mu.Lock()
		if s.stopped {
			s.mu.Unlock()
			cancel()
			return
		}
		s.cancel = cancel
		s.mu.Unlock()
		err := s.voice.Speak(callCtx, text)
		cancel()
		s.mu.Lock()
		s.cancel = nil
		failed := err != nil && !s.stopped && ctx.Err() == nil
		if failed {
			s.err, s.stopped, s.queue = err, true, nil
		}
		s.mu.Unlock()
		if failed {
			return
		}
	}
}

// next waits for text to speak and takes all that is queued; false when
// there will be none.
func (s *speaker) next(ctx context.Context) (string, bool) {
	for {
		s.mu.Lock()
		switch {
		case s.stopped || ctx.Err() != nil:
			s.mu.Unlock()
			return "", false
		case len(s.queue) > 0:
			// A blank line keeps each its own sentence for the speech
			// engine, even a heading or a list item with no full stop.
			text := strings.Join(s.queue, "\n\n")
			s.queue = nil
			s.mu.Unlock()
			return text, true
		case s.closed:
			s.mu.Unlock()
			return "", false
		}
		s.mu.Unlock()
		select {
		case <-s.more:
		case <-ctx.Done():
		}
	}
}
