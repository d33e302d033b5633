package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// corpus makes n varied memories from a fixed seed: people, places,
// hobbies, food and dates, so that query terms range from rare to common.
func corpus(n int) []NewMemory {
	r := rand.New(rand.NewPCG(1, 2))
	first := []string{"Sarah", "Tom", "Mia", "Ravi", "Elena", "Jonas", "Aiko", "Omar", "Lucia", "Pieter", "Chen", "Nadia", "Felix", "Grace", "Hugo", "Ines"}
	last := []string{"Chen", "Okafor", "Schmidt", "Rossi", "Tanaka", "Novak", "Silva", "Kowalski", "Dubois", "Larsen"}
	rel := []string{"boss", "sister", "brother", "neighbour", "dentist", "colleague", "friend", "cousin", "landlord", "coach"}
	places := []string{"Lisbon", "Berlin", "Kyoto", "Toronto", "Nairobi", "Oslo", "Lima", "Hanoi", "Porto", "Austin", "Krakow", "Dublin"}
	hobbies := []string{"climbing", "chess", "sourdough baking", "trail running", "watercolour painting", "birdwatching", "jazz piano", "woodworking", "kayaking", "pottery"}
	foods := []string{"ramen", "green tea", "dark chocolate", "espresso", "tacos", "pho", "sushi", "falafel", "paella", "kimchi"}
	months := []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	out := make([]NewMemory, n)
	for i := range out {
		p := first[r.IntN(len(first))] + " " + last[r.IntN(len(last))]
		var text string
		switch r.IntN(5) {
		case 0:
			text = fmt.Sprintf("The user's %s is %s, who lives in %s (%d).", rel[r.IntN(len(rel))], p, places[r.IntN(len(places))], i)
		case 1:
			text = fmt.Sprintf("The user enjoys %s on weekends and wants to try it in %s (%d).", hobbies[r.IntN(len(hobbies))], places[r.IntN(len(places))], i)
		case 2:
			text = fmt.Sprintf("The user prefers %s over %s (%d).", foods[r.IntN(len(foods))], foods[r.IntN(len(foods))], i)
		case 3:
			text = fmt.Sprintf("In %s %d the user travelled to %s with %s (%d).", months[r.IntN(12)], 2015+r.IntN(11), places[r.IntN(len(places))], p, i)
		default:
			text = fmt.Sprintf("%s recommended a book about %s to the user (%d).", p, hobbies[r.IntN(len(hobbies))], i)
		}
		out[i] = NewMemory{Text: text, Kind: kinds[r.IntN(4)], Tags: []string{[]string{"family", "work", "travel", "food", "hobby"}[r.IntN(5)]}}
	}
	return out
}

var queries = []string{
	"who is my boss?", "what food do I like", "when did I go to Kyoto", "Sarah Chen", "trail running",
	"what did Ravi recommend", "travel in March 2019", "dentist", "does the user like espresso", "pottery in Oslo",
}

func ingest(b *testing.B, s *Store, ms []NewMemory) {
	for i := 0; i < len(ms); i += 1000 {
		if _, err := s.Remember(context.Background(), ms[i:min(i+1000, len(ms))]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIngest10k(b *testing.B) {
	ms := corpus(10_000)
	for b.Loop() {
		b.StopTimer()
		s := openStore(b, nil)
		b.StartTimer()
		ingest(b, s, ms)
	}
}

func benchRecall(b *testing.B, n int) {
	s := openStore(b, nil)
	ingest(b, s, corpus(n))
	i := 0
	for b.Loop() {
		if _, err := s.Recall(context.Background(), RecallOptions{Query: queries[i%len(queries)], Limit: 10}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkRecall10k(b *testing.B)  { benchRecall(b, 10_000) }
func BenchmarkRecall100k(b *testing.B) { benchRecall(b, 100_000) }
