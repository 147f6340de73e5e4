package store

import "context"

// URLSearchState is whether a store's search of origins by URL
// (OriginsSearch) is served.
type URLSearchState string

// The states of the search of origins by URL.
const (
	// URLSearchOn: searches are served.
	URLSearchOn URLSearchState = "on"
	// URLSearchBuilding: being turned on; searches are refused until its
	// index is built.
	URLSearchBuilding URLSearchState = "building"
	// URLSearchOff: nothing is indexed; searches are refused.
	URLSearchOff URLSearchState = "off"
)

// URLSearchStatus is the state of a store's search of origins by URL and
// what it takes.
type URLSearchStatus struct {
	State URLSearchState
	// Own tells whether the search keeps tables and indexes of its own,
	// which turning it off frees; a search that reads the listed origins'
	// own index has none, and cannot be turned off.
	Own bool
	// Bytes is the disk space of those tables and indexes.
	Bytes int64
}

// URLSearchSwitch is implemented by stores whose search of origins by URL
// can be turned off, for an archive that does not need it, and on again.
// The state is the store's: every process using it sees a switch.
type URLSearchSwitch interface {
	// URLSearchStatus returns the search's state and the space it takes.
	URLSearchStatus(ctx context.Context) (URLSearchStatus, error)
	// SetURLSearch turns the search on (building its index from every
	// listed URL) or off (dropping it), and reports whether it changed
	// anything. A store whose search has no index of its own refuses to
	// turn it off, with an invalid-input error that says so.
	SetURLSearch(ctx context.Context, on bool) (changed bool, err error)
}
