package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
)

// listerFlag is the lister filter of the commands that take one:
// --lister NAME[/INSTANCE] or --lister-id UUID.
type listerFlag struct {
	spec string
	id   string
}

func (f *listerFlag) register(cmd *cobra.Command) {
	f.registerAs(cmd, "only the origins of the lister")
}

// registerAs registers the flags with usage what: "what NAME[/INSTANCE]"
// and "what with this UUID".
func (f *listerFlag) registerAs(cmd *cobra.Command, what string) {
	cmd.Flags().StringVar(&f.spec, "lister", "", what+" `NAME[/INSTANCE]`")
	cmd.Flags().StringVar(&f.id, "lister-id", "", what+" with this `UUID`")
}

// parse checks the flags without the store: the name and instance, or the
// id.
func (f *listerFlag) parse() (name, instance string, id *uuid.UUID, err error) {
	if f.spec != "" && f.id != "" {
		return "", "", nil, usagef("give --lister or --lister-id, not both")
	}
	if f.id != "" {
		u, err := revisit.ParseUUID("--lister-id", f.id)
		if err != nil {
			return "", "", nil, usageError{named("--lister-id", err)}
		}
		return "", "", &u, nil
	}
	if f.spec != "" {
		name, instance, _ = strings.Cut(f.spec, "/")
		if name == "" {
			return "", "", nil, usagef("--lister: %q has no lister name (NAME or NAME/INSTANCE)", f.spec)
		}
	}
	return name, instance, nil, nil
}

// resolve returns the lister the flags name, nil when none; a lister that
// does not exist is a not-found error.
func (f *listerFlag) resolve(ctx context.Context, st backend) (*revisit.Lister, error) {
	name, instance, id, err := f.parse()
	if err != nil || (name == "" && id == nil) {
		return nil, err
	}
	if id != nil {
		ls, err := st.ListerGetByIDs(ctx, []uuid.UUID{*id})
		if err != nil {
			return nil, fmt.Errorf("lister %s: %w", id, err)
		}
		if len(ls) == 0 {
			return nil, revisit.Errorf(revisit.CodeNotFound, "no lister with id %s", id)
		}
		return &ls[0], nil
	}
	l, err := st.ListerGet(ctx, name, instance)
	if revisit.Code(err) == revisit.CodeNotFound && !strings.Contains(f.spec, "/") {
		return onlyListerNamed(ctx, st, name)
	}
	if err != nil {
		if revisit.Code(err) == revisit.CodeNotFound {
			return nil, revisit.Errorf(revisit.CodeNotFound, "no lister %s", listerLabel(name, instance))
		}
		return nil, fmt.Errorf("lister %s: %w", listerLabel(name, instance), err)
	}
	return &l, nil
}

// onlyListerNamed returns the one lister of that name, whatever its
// instance, for --lister NAME when no lister of that name has no
// instance; several are named in the error, to choose from.
func onlyListerNamed(ctx context.Context, st backend, name string) (*revisit.Lister, error) {
	all, err := st.ListerList(ctx)
	if err != nil {
		return nil, fmt.Errorf("lister %s: %w", name, err)
	}
	var named []revisit.Lister
	for _, l := range all {
		if l.Name == name {
			named = append(named, l)
		}
	}
	switch len(named) {
	case 0:
		return nil, revisit.Errorf(revisit.CodeNotFound, "no lister %s", name)
	case 1:
		return &named[0], nil
	}
	labels := make([]string, len(named))
	for i, l := range named {
		labels[i] = listerLabel(l.Name, l.InstanceName)
	}
	return nil, revisit.Invalidf("lister", "%d listers are named %s: give one of %s", len(named), name, strings.Join(labels, ", "))
}

// resolveID is resolve returning only the id.
func (f *listerFlag) resolveID(ctx context.Context, st backend) (*uuid.UUID, error) {
	l, err := f.resolve(ctx, st)
	if err != nil || l == nil {
		return nil, err
	}
	return &l.ID, nil
}

// listerLabel writes a lister as NAME or NAME/INSTANCE, the form --lister
// takes.
func listerLabel(name, instance string) string {
	if instance == "" {
		return name
	}
	return name + "/" + instance
}

// listerNames finds the labels of lister ids, asking the store once per
// unknown id; it lets commands print listers by name.
type listerNames struct {
	st     backend
	labels map[uuid.UUID]string
}

func newListerNames(st backend) *listerNames {
	return &listerNames{st: st, labels: map[uuid.UUID]string{}}
}

// load looks up the ids not yet known.
func (n *listerNames) load(ctx context.Context, ids []uuid.UUID) error {
	var missing []uuid.UUID
	for _, id := range ids {
		if _, ok := n.labels[id]; !ok {
			missing = append(missing, id)
			n.labels[id] = ""
		}
	}
	if len(missing) == 0 {
		return nil
	}
	ls, err := n.st.ListerGetByIDs(ctx, missing)
	if err != nil {
		return fmt.Errorf("listers: %w", err)
	}
	for _, l := range ls {
		n.labels[l.ID] = listerLabel(l.Name, l.InstanceName)
	}
	return nil
}

func (n *listerNames) label(id uuid.UUID) string { return n.labels[id] }

// openStoreForLister checks the lister flags, opens the backend (the store,
// or the server of --server) and resolves the lister they name (nil when
// they name none).
func (a *app) openStoreForLister(cmd *cobra.Command, lf *listerFlag) (backend, *uuid.UUID, error) {
	if _, _, _, err := lf.parse(); err != nil {
		return nil, nil, err
	}
	st, err := a.backend(cmd)
	if err != nil {
		return nil, nil, err
	}
	id, err := lf.resolveID(cmd.Context(), st)
	return st, id, err
}
