package subscription

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/calsyncd/calsyncd/internal/feed"
)

// samplesPerKind is how many warnings of one kind a run logs one by one;
// the rest are counted (a 5 MB feed of empty events would otherwise log
// 200,000 lines, 33 MB, in one run).
const samplesPerKind = 10

// warningKinds are a run's feed warnings by kind, in order of first
// appearance.
type warningKinds struct {
	order []string
	count map[string]int
}

// kindsOf groups warnings by kind.
func kindsOf(ws []feed.Warning) warningKinds {
	k := warningKinds{count: map[string]int{}}
	for _, w := range ws {
		kind := warningKind(w.Message)
		if k.count[kind] == 0 {
			k.order = append(k.order, kind)
		}
		k.count[kind]++
	}
	return k
}

// warningKind is what warnings of one kind share: the message without
// what differs from event to event (numbers, quoted summaries and UIDs).
func warningKind(msg string) string {
	var b strings.Builder
	inQuote, digits := false, false
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		switch {
		case c == '\\' && inQuote:
			i++
		case c == '"':
			if !inQuote {
				b.WriteString(`"…"`)
			}
			inQuote = !inQuote
		case inQuote:
		case c < unicode.MaxASCII && unicode.IsDigit(rune(c)):
			if !digits {
				b.WriteByte('N')
			}
			digits = true
			continue
		default:
			b.WriteByte(c)
		}
		digits = false
	}
	return b.String()
}

// logWarnings logs the first samplesPerKind warnings of each kind (debug),
// then, for each kind with more, one line with its total.
func (p pass) logWarnings(ws []feed.Warning) {
	shown := map[string]int{}
	for _, w := range ws {
		kind := warningKind(w.Message)
		if shown[kind] < samplesPerKind {
			p.log.Debug("feed warning", "event", w.UID, "warning", w.Message)
		}
		shown[kind]++
	}
	k := kindsOf(ws)
	for _, kind := range k.order {
		if n := k.count[kind]; n > samplesPerKind {
			p.log.Debug("feed warnings of one kind", "kind", kind, "count", n, "logged", samplesPerKind)
		}
	}
}

// summary is the run line's account of the warnings: the commonest
// kinds with their counts.
func (k warningKinds) summary() string {
	kinds := append([]string(nil), k.order...)
	sort.SliceStable(kinds, func(i, j int) bool { return k.count[kinds[i]] > k.count[kinds[j]] })
	var parts []string
	for i, kind := range kinds {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more kinds", len(kinds)-3))
			break
		}
		parts = append(parts, fmt.Sprintf("%d× %s", k.count[kind], kind))
	}
	return strings.Join(parts, "; ")
}
