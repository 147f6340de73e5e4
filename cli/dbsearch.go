package cli

import (
	"fmt"
	"math"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit/store"
)

func (a *app) dbSearchCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "search [status|on|off]",
		Short: "Show the state of the search of origins by URL, or turn it on or off",
		Long: `The search of origins by URL (revisit origin search, the console's
search, GET /api/v1/origins/search) keeps, on PostgreSQL, every listed URL
in a table of its own with a trigram index: about a quarter of the
database, and work for every recording of a new URL. An archive that does
not need the search may turn it off, for every process using the store.

status (the default) says whether the search is on and the space it takes.

off drops the trigram index and empties the search's tables, and says what
it freed. Searches are then refused, saying how to turn the search on;
looking an origin up by its URL and browsing origins keep working.

on copies every listed URL into the search's table and builds its trigram
index again: a few minutes at 10M origins (docs/store.md, "Turning the
search off"). Recordings go on meanwhile; searches are refused until it is
done. An interrupted on is finished by the next.

The SQLite store's search reads the listed origins' own index, which they
need anyway: it is always on, and off is refused.`,
		Example: `  revisit db search
  revisit db search off
  revisit db search on`,
		Args: rangeArgs(0, 1, "[status|on|off]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			action := "status"
			if len(args) == 1 {
				action = args[0]
			}
			if action != "status" && action != "on" && action != "off" {
				return usagef("%q is not one of status, on, off", action)
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			sw, ok := st.(store.URLSearchSwitch)
			if !ok {
				return fmt.Errorf("this store's search of origins by URL has no switch")
			}
			before, err := sw.URLSearchStatus(cmd.Context())
			switch {
			case err != nil:
				return err
			case action == "status":
				return a.printSummary(urlSearchSentence(before), cols("state", "own_index", "bytes"),
					string(before.State), before.Own, before.Bytes)
			}
			return a.setURLSearch(cmd, sw, before, action == "on")
		},
	}
}

// setURLSearch turns the URL search on or off and says what it did: the
// space freed, or how long the index took to build and its size.
func (a *app) setURLSearch(cmd *cobra.Command, sw store.URLSearchSwitch, before store.URLSearchStatus, on bool) error {
	started := time.Now()
	changed, err := sw.SetURLSearch(cmd.Context(), on)
	if err != nil {
		return err
	}
	took := time.Since(started)
	after, err := sw.URLSearchStatus(cmd.Context())
	if err != nil {
		return err
	}
	if !on {
		freed := max(before.Bytes-after.Bytes, 0)
		sentence := "URL search already off"
		if changed {
			sentence = "URL search turned off: " + humanize.Bytes(uint64(freed)) + " freed"
		}
		return a.printSummary(sentence, cols("state", "changed", "freed_bytes"), string(after.State), changed, freed)
	}
	sentence := "URL search already on"
	if !after.Own {
		sentence = urlSearchSentence(after)
	}
	if changed {
		sentence = fmt.Sprintf("URL search turned on in %s: its tables and indexes take %s",
			took.Round(100*time.Millisecond), humanize.Bytes(uint64(after.Bytes)))
	}
	return a.printSummary(sentence, cols("state", "changed", "seconds", "bytes"), string(after.State), changed,
		math.Round(took.Seconds()*10)/10, after.Bytes)
}

// urlSearchSentence says what the state of the URL search is.
func urlSearchSentence(s store.URLSearchStatus) string {
	switch {
	case !s.Own:
		return "URL search on (uses the listed origins' own index)"
	case s.State == store.URLSearchOn:
		return "URL search on: its tables and indexes take " + humanize.Bytes(uint64(s.Bytes)) + " (`revisit db search off` drops them)"
	case s.State == store.URLSearchBuilding:
		return "URL search being turned on: its index is being built (if `revisit db search on` was interrupted, run it again)"
	}
	return "URL search off: searches are refused and recordings leave no URL to index (`revisit db search on` builds its index)"
}
