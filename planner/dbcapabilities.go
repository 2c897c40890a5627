package planner

// What the lakesql database has no triggers, stored procedures and events
// of, and where its views are, said by the database itself. Once accounts
// are on (privileges.go) go-mysql-server wraps every database in its
// privilege layer, which implements all of these interfaces and, for a
// database that does not, fails the reads ("doesn't support triggers")
// that go-mysql-server otherwise skips: an INSERT reads the triggers, a
// table name the views. The writes (CREATE TRIGGER, PROCEDURE, EVENT) stay
// refused with 1235, as before.
//
// A view lives in its session (go-mysql-server's view registry of the
// session), as it always has in lakesql.

import (
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
)

var (
	_ gms.ViewDatabase            = (*database)(nil)
	_ gms.TriggerDatabase         = (*database)(nil)
	_ gms.StoredProcedureDatabase = (*database)(nil)
	_ gms.EventDatabase           = (*database)(nil)
)

// GetTriggers implements sql.TriggerDatabase: there are none.
func (d *database) GetTriggers(*gms.Context) ([]gms.TriggerDefinition, error) { return nil, nil }

// CreateTrigger implements sql.TriggerDatabase: refused.
func (d *database) CreateTrigger(*gms.Context, gms.TriggerDefinition) error {
	return gms.ErrTriggersNotSupported.New(d.Name())
}

// DropTrigger implements sql.TriggerDatabase: there is none to drop.
func (d *database) DropTrigger(_ *gms.Context, name string) error {
	return gms.ErrTriggerDoesNotExist.New(name)
}

// GetStoredProcedure implements sql.StoredProcedureDatabase: lakesql's
// procedures are the provider's (procedures.go), not the database's.
func (d *database) GetStoredProcedure(*gms.Context, string) (gms.StoredProcedureDetails, bool, error) {
	return gms.StoredProcedureDetails{}, false, nil
}

// GetStoredProcedures implements sql.StoredProcedureDatabase.
func (d *database) GetStoredProcedures(*gms.Context) ([]gms.StoredProcedureDetails, error) {
	return nil, nil
}

// SaveStoredProcedure implements sql.StoredProcedureDatabase: refused.
func (d *database) SaveStoredProcedure(*gms.Context, gms.StoredProcedureDetails) error {
	return gms.ErrStoredProceduresNotSupported.New(d.Name())
}

// DropStoredProcedure implements sql.StoredProcedureDatabase.
func (d *database) DropStoredProcedure(_ *gms.Context, name string) error {
	return gms.ErrStoredProcedureDoesNotExist.New(name)
}

// GetEvent implements sql.EventDatabase: there are none.
func (d *database) GetEvent(*gms.Context, string) (gms.EventDefinition, bool, error) {
	return gms.EventDefinition{}, false, nil
}

// GetEvents implements sql.EventDatabase.
func (d *database) GetEvents(*gms.Context) ([]gms.EventDefinition, any, error) { return nil, nil, nil }

// SaveEvent implements sql.EventDatabase: refused.
func (d *database) SaveEvent(*gms.Context, gms.EventDefinition) (bool, error) {
	return false, gms.ErrEventsNotSupported.New(d.Name())
}

// DropEvent implements sql.EventDatabase.
func (d *database) DropEvent(_ *gms.Context, name string) error {
	return gms.ErrEventDoesNotExist.New(name)
}

// UpdateEvent implements sql.EventDatabase: refused.
func (d *database) UpdateEvent(*gms.Context, string, gms.EventDefinition) (bool, error) {
	return false, gms.ErrEventsNotSupported.New(d.Name())
}

// NeedsToReloadEvents implements sql.EventDatabase.
func (d *database) NeedsToReloadEvents(*gms.Context, any) (bool, error) { return false, nil }

// UpdateLastExecuted implements sql.EventDatabase.
func (d *database) UpdateLastExecuted(*gms.Context, string, time.Time) error {
	return gms.ErrEventsNotSupported.New(d.Name())
}

// CreateView implements sql.ViewDatabase.
func (d *database) CreateView(ctx *gms.Context, name string, selectStatement, createViewStmt string) error {
	return ctx.GetViewRegistry().Register(d.Name(), gms.NewView(name, nil, selectStatement, createViewStmt))
}

// DropView implements sql.ViewDatabase.
func (d *database) DropView(ctx *gms.Context, name string) error {
	return ctx.GetViewRegistry().Delete(d.Name(), name)
}

// GetViewDefinition implements sql.ViewDatabase.
func (d *database) GetViewDefinition(ctx *gms.Context, name string) (gms.ViewDefinition, bool, error) {
	v, ok := ctx.GetViewRegistry().View(d.Name(), name)
	if !ok {
		return gms.ViewDefinition{}, false, nil
	}
	return viewDefinition(v), true, nil
}

// AllViews implements sql.ViewDatabase.
func (d *database) AllViews(ctx *gms.Context) ([]gms.ViewDefinition, error) {
	var out []gms.ViewDefinition
	for _, v := range ctx.GetViewRegistry().ViewsInDatabase(d.Name()) {
		out = append(out, viewDefinition(v))
	}
	return out, nil
}

func viewDefinition(v *gms.View) gms.ViewDefinition {
	return gms.ViewDefinition{Name: v.Name(), TextDefinition: v.TextDefinition(), CreateViewStatement: v.CreateStatement()}
}
