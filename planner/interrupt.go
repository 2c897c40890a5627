package planner

// KILL QUERY, KILL and a client that goes away cancel the statement's
// context, which go-mysql-server's iterators and SLEEP watch, but its
// analyzer never looks at it: a statement being analysed ran on. Every
// analyzer rule here first checks the context, so analysis stops at the
// next rule (nested subqueries are analysed rule by rule too). Analysis
// changes no session state, so stopping between rules leaves none half
// changed.
//
// Joins are the other place: go-mysql-server's join iterators never look
// at the context either, and a cross join produces its rows from memory
// without anything under it that does. Every join's iterator is wrapped
// in one that checks the context as rows pass.

import (
	"fmt"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// interruptibleAnalysis gives a the batches of rules it has, each rule
// checking the context first. The batches and their rule lists are
// copies: go-mysql-server's are package variables every engine shares.
func interruptibleAnalysis(a *analyzer.Analyzer) {
	batches := make([]*analyzer.Batch, len(a.Batches))
	for i, b := range a.Batches {
		nb := *b
		nb.Rules = make([]analyzer.Rule, len(b.Rules))
		for j, r := range b.Rules {
			nb.Rules[j] = analyzer.Rule{Id: r.Id, Apply: interruptible(r.Apply)}
		}
		batches[i] = &nb
	}
	a.Batches = batches
}

func interruptible(apply analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *gms.Context, a *analyzer.Analyzer, n gms.Node, scope *plan.Scope, sel analyzer.RuleSelector, qf *gms.QueryFlags) (gms.Node, transform.TreeIdentity, error) {
		if err := ctx.Err(); err != nil {
			return n, transform.SameTree, fmt.Errorf("%w while it was analysed (%w)", errInterrupted, err)
		}
		return apply(ctx, a, n, scope, sel, qf)
	}
}

// interruptibleJoin builds a join's iterator with the default builder and
// wraps it in interruptibleIter. The join is noted while it is built, so
// the default builder's own call of the override leaves it alone.
func (s *strictBuilder) interruptibleJoin(ctx *gms.Context, n *plan.JoinNode, row gms.Row) (gms.RowIter, error) {
	if _, building := s.joins.LoadOrStore(n, true); building {
		return nil, nil
	}
	defer s.joins.Delete(n)
	iter, err := s.build.Build(ctx, n, row)
	if err != nil {
		return nil, err
	}
	return &interruptibleIter{RowIter: iter}, nil
}

// interruptCheckRows is how many rows pass between two looks at the context.
const interruptCheckRows = 256

// interruptibleIter ends its rows with the context's error once the
// statement is cancelled.
type interruptibleIter struct {
	gms.RowIter
	n int
}

func (it *interruptibleIter) Next(ctx *gms.Context) (gms.Row, error) {
	it.n++
	if it.n%interruptCheckRows == 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return it.RowIter.Next(ctx)
}
