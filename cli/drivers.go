package cli

// The store drivers the command line supports; each registers its URL
// schemes with package store.
import (
	_ "github.com/revisit-sched/revisit/store/postgres" // postgres://, postgresql://
	_ "github.com/revisit-sched/revisit/store/sqlite"   // sqlite://
)
