package subscription

import (
	"fmt"

	"github.com/calsyncd/calsyncd/internal/diff"
	"github.com/calsyncd/calsyncd/internal/feed"
)

// A body cut before END:VCALENDAR (feed.Cut) is mirrored as far as it is
// whole: its complete events are created and updated as any feed's, but
// what it lacks may have been cut off rather than removed, so none of its
// deletes is made. The run is no failure: some producers never write
// END:VCALENDAR, and a subscription whose feed has that shape run after
// run stays ACTIVE, with a note saying why deletes wait.

// holdCut takes the deletes out of a plan made from a cut body and
// returns how many it took. Those of a body that stops between two
// components are the operator's to allow (--allow-deletes: a producer
// that never writes END:VCALENDAR); a body that stops inside a component
// broke off, and never deletes anything.
func (p pass) holdCut(plan diff.Plan) (diff.Plan, int) {
	cut := p.parsed.cal.Cut
	if cut == feed.Whole || len(plan.Deletes) == 0 || (cut == feed.CutBetween && p.opts.AllowDeletes) {
		return plan, 0
	}
	n := len(plan.Deletes)
	plan.Deletes = nil
	return plan, n
}

// cutKind starts the note of a feed cut before END:VCALENDAR.
const cutKind noteKind = "The feed ends without END:VCALENDAR"

// cutNote is the status note for a run that read a cut body ("": the
// body was whole).
func (p pass) cutNote() string {
	held := 0
	for _, rd := range p.rounds {
		held += rd.planned.cutHeld
	}
	switch p.parsed.cal.Cut {
	case feed.CutBetween:
		return fmt.Sprintf("%s (its producer never writes it, or the download stopped between two events): "+
			"its complete events are mirrored, but an event missing from it may have been cut off rather than removed, "+
			"so calsyncd deletes none (%d held this run); when the feed's provider is known never to write END:VCALENDAR, "+
			"`calsyncd sync --allow-deletes %s` makes the deletes", cutKind, held, p.sub.ID)
	case feed.CutInside:
		return fmt.Sprintf("%s and stops inside an event (a download that broke off?): its complete events are mirrored, "+
			"the unfinished one is left as Google has it, and nothing is deleted (%d held this run) until the feed arrives whole",
			cutKind, held)
	}
	return ""
}
