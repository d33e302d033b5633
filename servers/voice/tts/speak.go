package tts

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/domo-agent/domo/internal/sentences"
)

// ahead is how many sentences are synthesized ahead of the one being
// heard: enough that the next one is ready when this one ends, few enough
// that a cancelled reply wasted little work.
const ahead = 2

// queuedChunks bounds the audio queued inside one sentence; a faster
// synthesizer waits.
const queuedChunks = 64

// item is one thing in the queue between synthesis and the sink: audio, a
// sentence's end, or the error that stopped synthesis.
type item struct {
	pcm  []int16
	rate int
	end  bool
	err  error
}

// Speak speaks a reply: Markdown becomes plain words, the words become
// sentences, and each sentence is synthesized while the one before it is
// still going to sink, so the first audio comes out as soon as the first
// sentence starts to be synthesized. sink is called from the calling
// goroutine, in order. Speak returns once all audio went to sink, at the
// first error, or when ctx ends, with no work left running.
func Speak(ctx context.Context, s Synth, text string, o Options, sink Sink) error {
	says := sentences.Split(sentences.ForSpeech(text))
	if len(says) == 0 {
		return ErrNothingToSay
	}
	if _, err := o.speed(); err != nil {
		return err
	}

	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait() // after cancel: deferred calls run last first
	defer cancel()

	queue := make(chan item, queuedChunks)
	slots := make(chan struct{}, ahead+1) // one per sentence not yet heard to its end
	send := func(it item) error {
		select {
		case queue <- it:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	wg.Go(func() {
		defer close(queue)
		for i, say := range says {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			err := s.Synthesize(ctx, say, o, func(pcm []int16, rate int) error {
				return send(item{pcm: slices.Clone(pcm), rate: rate})
			})
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				send(item{err: fmt.Errorf("%s, sentence %d of %d: %w", s.Name(), i+1, len(says), err)})
				return
			}
			if send(item{end: true}) != nil {
				return
			}
		}
	})

	for {
		var it item
		var ok bool
		select {
		case it, ok = <-queue:
		case <-ctx.Done():
		}
		switch {
		case parent.Err() != nil:
			return parent.Err()
		case !ok:
			return nil
		case it.err != nil:
			return it.err
		case it.end:
			<-slots
		default:
			if err := sink(it.pcm, it.rate); err != nil {
				return err
			}
		}
	}
}
