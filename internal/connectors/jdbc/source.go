package jdbc

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"sync"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/task"
	"github.com/samsa-io/samsa/internal/version"
)

// SourceConnector copies tables (or a query's rows) into topics, as
// Confluent's io.confluent.connect.jdbc.JdbcSourceConnector: it lists the
// tables, splits them over tasks, and watches for tables created or dropped
// (table.poll.interval.ms), asking for new task configs when they change.
type SourceConnector struct {
	ctx      connect.ConnectorContext
	props    map[string]string
	settings sourceSettings
	db       *sql.DB
	group    *task.Group

	mu     sync.Mutex
	tables []tableID // guarded by mu: the tables the tasks were last given
}

var (
	_ connect.SourceConnector    = (*SourceConnector)(nil)
	_ connect.ConnectorValidator = (*SourceConnector)(nil)
)

func (c *SourceConnector) Version() string            { return version.Version }
func (c *SourceConnector) Config() *connect.ConfigDef { return sourceConfigDef() }
func (c *SourceConnector) NewTask() connect.SourceTask {
	return &SourceTask{}
}

// Validate adds Confluent's cross-config checks to the ConfigDef's.
func (c *SourceConnector) Validate(props map[string]string) []connect.ConfigValue {
	return crossValidate(sourceConfigDef(), props, func() error {
		_, err := parseSourceSettings(props)
		return err
	})
}

// Start connects (connection.attempts times), lists the tables to copy and
// starts the table monitor.
func (c *SourceConnector) Start(ctx connect.ConnectorContext, props map[string]string) error {
	s, err := parseSourceSettings(props)
	if err != nil {
		return err
	}
	c.ctx, c.props, c.settings = ctx, props, s
	c.db, err = openDB(context.Background(), s.conn, s.attempts, s.backoff)
	if err != nil {
		return err
	}
	if s.query != "" {
		return nil
	}
	tables, err := c.listTables(context.Background())
	if err != nil {
		c.db.Close()
		return err
	}
	c.tables = tables
	if len(tables) == 0 {
		ctx.Logger().Warn("jdbc source: no tables match the configuration yet; no tasks will run until one appears")
	}
	c.group = task.NewGroup(context.Background())
	if s.tablePoll > 0 {
		c.group.Every(s.tablePoll, c.checkTables)
	}
	return nil
}

// listTables is the tables the config selects.
func (c *SourceConnector) listTables(ctx context.Context) ([]tableID, error) {
	all, err := c.settings.dialect.listTables(ctx, c.db, c.settings.tableTypes, c.settings.schemaPattern)
	if err != nil {
		return nil, err
	}
	var out []tableID
	for _, t := range all {
		if tableSelected(t, c.settings.include, c.settings.exclude) {
			out = append(out, t)
		}
	}
	return out, nil
}

// tableSelected applies the include and exclude lists; an entry names a
// table by its name or by schema.name.
func tableSelected(t tableID, include, exclude []string) bool {
	matches := func(list []string) bool {
		return slices.ContainsFunc(list, func(e string) bool { return e == t.name || e == t.String() })
	}
	if len(include) > 0 {
		return matches(include)
	}
	return !matches(exclude)
}

// checkTables is the table monitor: a change in the set of tables asks the
// runtime for new task configs.
func (c *SourceConnector) checkTables(ctx context.Context) {
	tables, err := c.listTables(ctx)
	if err != nil {
		c.ctx.Logger().Warn("jdbc source: could not list tables", "error", err)
		return
	}
	c.mu.Lock()
	changed := !slices.Equal(tables, c.tables)
	if changed {
		c.tables = tables
	}
	c.mu.Unlock()
	if changed {
		c.ctx.Logger().Info("jdbc source: the set of tables changed; reconfiguring tasks", "tables", len(tables))
		c.ctx.RequestTaskReconfiguration()
	}
}

// TaskConfigs gives query mode one task and splits tables into contiguous
// groups otherwise, as Confluent's ConnectorUtils.groupPartitions.
func (c *SourceConnector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	if c.settings.query != "" {
		return []map[string]string{copyProps(c.props)}, nil
	}
	c.mu.Lock()
	tables := append([]tableID(nil), c.tables...)
	c.mu.Unlock()
	if len(tables) == 0 || maxTasks < 1 {
		return []map[string]string{}, nil
	}
	n := min(maxTasks, len(tables))
	out := make([]map[string]string, 0, n)
	per, extra := len(tables)/n, len(tables)%n
	start := 0
	for i := range n {
		size := per
		if i < extra {
			size++
		}
		names := make([]string, 0, size)
		for _, t := range tables[start : start+size] {
			names = append(names, t.String())
		}
		start += size
		p := copyProps(c.props)
		p[taskConfigTables] = strings.Join(names, ",")
		out = append(out, p)
	}
	return out, nil
}

func (c *SourceConnector) Stop() error {
	if c.group != nil {
		c.group.Stop()
	}
	if c.db != nil {
		return c.db.Close()
	}
	return nil
}

func copyProps(p map[string]string) map[string]string {
	out := make(map[string]string, len(p)+1)
	for k, v := range p {
		out[k] = v
	}
	return out
}

// crossValidate is the ConfigDef's validation plus a check over the whole
// config, whose error is put on the config it names (or connection.url).
func crossValidate(def *connect.ConfigDef, props map[string]string, check func() error) []connect.ConfigValue {
	values := def.Validate(props)
	for _, v := range values {
		if len(v.Errors) > 0 {
			return values // the per-key errors say it first
		}
	}
	err := check()
	if err == nil {
		return values
	}
	name := cfgConnectionURL
	for _, k := range def.Keys() {
		if msg := err.Error(); strings.HasPrefix(msg, k.Name+" ") || strings.HasPrefix(msg, k.Name+":") {
			name = k.Name
			break
		}
	}
	for i := range values {
		if values[i].Name == name {
			values[i].Errors = append(values[i].Errors, err.Error())
			return values
		}
	}
	return append(values, connect.ConfigValue{Name: name, Errors: []string{err.Error()}, Visible: true})
}
