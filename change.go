package calsyncd

// Change is one change to what the store knows of a subscription's events:
// a mapping saved or forgotten, a rejection recorded or forgotten. A pass
// hands the store its changes in groups that must land together (a rekey
// is a save and a delete), and the store commits many such groups in one
// transaction.
type Change struct {
	Kind ChangeKind
	// Mapping is saved by SaveMapping (which also forgets the key's
	// rejection: a written event is no longer refused).
	Mapping Mapping
	// Rejection is recorded by SaveRejection.
	Rejection Rejection
	// Key is forgotten by DeleteMapping and DeleteRejection.
	Key Key
}

// ChangeKind says what a Change does.
type ChangeKind int

// The kinds of change.
const (
	SaveMapping ChangeKind = iota + 1
	DeleteMapping
	SaveRejection
	DeleteRejection
)

// MappingSaved is the change that saves m.
func MappingSaved(m Mapping) Change { return Change{Kind: SaveMapping, Mapping: m, Key: m.Key} }

// MappingDeleted is the change that forgets k's mapping.
func MappingDeleted(k Key) Change { return Change{Kind: DeleteMapping, Key: k} }

// RejectionSaved is the change that records r.
func RejectionSaved(r Rejection) Change { return Change{Kind: SaveRejection, Rejection: r, Key: r.Key} }

// RejectionDeleted is the change that forgets k's rejection.
func RejectionDeleted(k Key) Change { return Change{Kind: DeleteRejection, Key: k} }
