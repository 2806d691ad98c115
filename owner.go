package calsyncd

import "slices"

// Owner names the installation whose marks an event carries, so that two
// installations (or a test instance beside production) writing one
// calendar under the same subscription ids never take each other's events.
// Name is written into the marks and the derived ids of every event written
// from now on; Former are names this installation's database wrote under
// before (an owner renamed in the configuration), still recognised as its
// own. Events written before calsyncd had owners carry no owner mark: they
// are recognised as the subscription's, and take Name at their next write.
// The zero Owner is that legacy form: no owner mark, legacy ids.
type Owner struct {
	Name   string
	Former []string
}

// Recognises reports whether an event's owner mark ("" for none) is this
// installation's.
func (o Owner) Recognises(mark string) bool {
	return mark == "" || mark == o.Name || slices.Contains(o.Former, mark)
}

// Names lists every name whose derived ids are this installation's: the
// legacy form (""), the current name and the former ones, once each.
func (o Owner) Names() []string {
	out := []string{""}
	for _, n := range append([]string{o.Name}, o.Former...) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
