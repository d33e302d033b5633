package main

import (
	"fmt"
	"math/rand/v2"
)

// The memory corpus: short sentences about people, places, hobbies and
// dates, the kind of facts an assistant keeps. Who and what a sentence is
// about is drawn with Zipf weights, so some names and places are in
// thousands of memories and others in a handful; queries are drawn
// uniformly from the same vocabulary, so they mix frequent and rare terms.

var (
	firstNames = []string{"Alice", "Bruno", "Chiara", "Dmitri", "Elena", "Farid", "Greta", "Hiroshi", "Ingrid", "Jamal",
		"Katarzyna", "Luca", "Mei", "Nadia", "Oskar", "Priya", "Quentin", "Rosa", "Sven", "Tomasz", "Ursula", "Vikram",
		"Wanda", "Ximena", "Yusuf", "Zofia", "Amara", "Bernard", "Camille", "Diego", "Esther", "Florian", "Gwen", "Hugo",
		"Isla", "Joaquín", "Kenji", "Leila", "Marek", "Noor", "Olga", "Pablo", "Rania", "Stefan", "Tamsin", "Umar",
		"Véronique", "Wilhelm", "Yara", "Zeynep"}
	lastNames = []string{"Moreau", "Kowalski", "Tanaka", "Okafor", "Lindqvist", "Ferreira", "Novak", "Haddad", "Schmidt",
		"O'Brien", "Rossi", "Nguyen", "Petrov", "García", "Andersen", "Dubois", "Müller", "Costa", "Yilmaz", "Fischer",
		"Kaur", "Jansen", "Popescu", "Larsen", "Esposito", "Horvath", "Silva", "Weber", "Nakamura", "Brennan"}
	places = []string{"Lisbon", "Kraków", "Osaka", "Lagos", "Uppsala", "Porto", "Ljubljana", "Beirut", "Hamburg", "Dublin",
		"Naples", "Hanoi", "Tbilisi", "Seville", "Aarhus", "Lyon", "Zurich", "Curitiba", "Izmir", "Leipzig", "Amritsar",
		"Utrecht", "Cluj", "Bergen", "Bologna", "Debrecen", "Recife", "Graz", "Sapporo", "Galway", "Montréal", "Valparaíso",
		"Marrakesh", "Tallinn", "Trieste", "Bilbao", "Kyoto", "Edinburgh", "Nantes", "Gdańsk"}
	hobbies = []string{"hiking", "pottery", "chess", "climbing", "birdwatching", "sailing", "baking", "knitting",
		"photography", "cycling", "gardening", "fencing", "kayaking", "calligraphy", "woodworking", "astronomy",
		"bouldering", "origami", "beekeeping", "orienteering", "surfing", "juggling", "archery", "skiing", "rowing",
		"embroidery", "karaoke", "geocaching", "snorkelling", "tango"}
	foods = []string{"ramen", "paella", "pierogi", "jollof", "falafel", "risotto", "kimchi", "goulash", "empanadas",
		"moussaka", "bibimbap", "couscous", "lasagne", "dumplings", "ceviche", "tiramisu", "baklava", "pho", "curry", "fondue"}
	jobs = []string{"nurse", "carpenter", "translator", "architect", "teacher", "pharmacist", "engineer", "librarian",
		"chef", "pilot", "accountant", "journalist", "electrician", "veterinarian", "designer", "physiotherapist"}
	orgs = []string{"Acme Logistics", "Northwind", "Globex", "Initech", "Umbrella Health", "Stark Mobility",
		"Wayne Foods", "Hooli", "Vandelay Imports", "Soylent", "Tyrell Labs", "Cyberdyne", "Wonka Confectionery",
		"Oscorp", "Aperture Science", "Massive Dynamic"}
	pets      = []string{"cat", "dog", "parrot", "tortoise", "rabbit", "hamster", "ferret", "goldfish", "iguana"}
	petNames  = []string{"Biscuit", "Pepper", "Mochi", "Luna", "Ziggy", "Noodle", "Waffles", "Pixel", "Clementine", "Otto", "Juniper", "Tofu"}
	languages = []string{"Portuguese", "Japanese", "Swahili", "Polish", "Finnish", "Turkish", "Korean", "Dutch", "Greek", "Hindi", "Catalan", "Icelandic"}
	months    = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	weekdays  = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
)

// corpus draws sentences and queries from one seeded generator.
type corpus struct {
	r      *rand.Rand
	people []string
	zipf   map[int]*rand.Zipf // by list length
}

// fact is one memory: its text and the person it is about.
type fact struct {
	text   string
	person string
}

func newCorpus(seed uint64) *corpus {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	c := &corpus{r: r, zipf: map[int]*rand.Zipf{}}
	seen := map[string]bool{}
	for len(c.people) < 600 {
		p := firstNames[r.IntN(len(firstNames))] + " " + lastNames[r.IntN(len(lastNames))]
		if !seen[p] {
			seen[p] = true
			c.people = append(c.people, p)
		}
	}
	return c
}

// pick returns an element of list, the first ones far more often than the
// last (Zipf, s = 1.1).
func pick[T any](c *corpus, list []T) T {
	z, ok := c.zipf[len(list)]
	if !ok {
		z = rand.NewZipf(c.r, 1.1, 1, uint64(len(list)-1))
		c.zipf[len(list)] = z
	}
	return list[z.Uint64()]
}

func (c *corpus) date() string {
	return fmt.Sprintf("%d %s %d", 1+c.r.IntN(28), months[c.r.IntN(12)], 2012+c.r.IntN(15))
}

// fact returns the next memory of the corpus.
func (c *corpus) fact() fact {
	p, q := pick(c, c.people), pick(c, c.people)
	var s string
	switch c.r.IntN(12) {
	case 0:
		s = fmt.Sprintf("%s moved to %s on %s and still misses the old flat.", p, pick(c, places), c.date())
	case 1:
		s = fmt.Sprintf("%s took up %s in %d and goes every %s with %s.", p, pick(c, hobbies), 2012+c.r.IntN(15), weekdays[c.r.IntN(7)], q)
	case 2:
		s = fmt.Sprintf("%s's favourite dish is %s; they cook it for friends about %d times a year.", p, pick(c, foods), 2+c.r.IntN(20))
	case 3:
		s = fmt.Sprintf("%s has worked at %s as a %s since %s.", p, pick(c, orgs), pick(c, jobs), c.date())
	case 4:
		s = fmt.Sprintf("On %s, %s and %s went %s near %s.", c.date(), p, q, pick(c, hobbies), pick(c, places))
	case 5:
		s = fmt.Sprintf("%s has a %s called %s, adopted in %s %d.", p, pick(c, pets), pick(c, petNames), months[c.r.IntN(12)], 2012+c.r.IntN(15))
	case 6:
		s = fmt.Sprintf("%s is learning %s before a trip to %s planned for %s.", p, pick(c, languages), pick(c, places), months[c.r.IntN(12)])
	case 7:
		s = fmt.Sprintf("%s's birthday is on %d %s; last year they celebrated in %s with %s.", p, 1+c.r.IntN(28), months[c.r.IntN(12)], pick(c, places), pick(c, foods))
	case 8:
		s = fmt.Sprintf("%s recommended a %s restaurant in %s serving great %s.", p, pick(c, languages), pick(c, places), pick(c, foods))
	case 9:
		s = fmt.Sprintf("%s and %s met at a %s club in %s on %s.", p, q, pick(c, hobbies), pick(c, places), c.date())
	case 10:
		s = fmt.Sprintf("%s asked to be reminded every %s to call %s about the %s course.", p, weekdays[c.r.IntN(7)], q, pick(c, hobbies))
	default:
		s = fmt.Sprintf("%s switched from %s to %s on %s, and now commutes to %s by bike.", p, pick(c, orgs), pick(c, orgs), c.date(), pick(c, places))
	}
	return fact{text: s, person: p}
}

// query returns a search term drawn uniformly from the vocabulary: a first
// name, a full name, a place, a hobby, a food, an employer, a language or a
// month.
func (c *corpus) query() string {
	one := func(l []string) string { return l[c.r.IntN(len(l))] }
	switch n := c.r.IntN(20); {
	case n < 5:
		return one(firstNames)
	case n < 8:
		return one(c.people)
	case n < 12:
		return one(places)
	case n < 15:
		return one(hobbies)
	case n < 17:
		return one(foods)
	case n < 18:
		return one(orgs)
	case n < 19:
		return one(languages)
	default:
		return one(months)
	}
}
