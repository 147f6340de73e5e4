package store

import "context"

// Relation is one table or index of a store and the disk space it takes.
type Relation struct {
	// Name is the table's or the index's name; Table, the table an index
	// belongs to (a table's own name for a table).
	Name  string `json:"name"`
	Table string `json:"table"`
	Index bool   `json:"index"`
	// Bytes is the space taken: for a table its heap and what stores its
	// large values, for an index the index.
	Bytes int64 `json:"bytes"`
}

// Footprinter is implemented by stores that can tell the disk space of
// each of their tables and indexes, largest first: what an origin or a
// result costs to keep.
type Footprinter interface {
	Footprint(ctx context.Context) ([]Relation, error)
}

// WALMeter is implemented by stores whose database server keeps a
// write-ahead log: the bytes it has written so far, for every database of
// the server, so that a benchmark on an otherwise idle server can tell
// what an operation writes.
type WALMeter interface {
	WALBytes(ctx context.Context) (int64, error)
}
