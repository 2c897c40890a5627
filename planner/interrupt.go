package planner

// KILL QUERY, KILL and a client that goes away cancel the statement's
// context, which go-mysql-server's iterators and SLEEP watch, but its
// analyzer never looks at it: a statement being analysed ran on. Every
// analyzer rule here first checks the context, so analysis stops at the
// next rule (nested subqueries are analysed rule by rule too). Analysis
// changes no session state, so stopping between rules leaves none half
// changed.

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
			return n, transform.SameTree, failed(ctx, fmt.Errorf("%w while it was analysed (%w)", errInterrupted, err))
		}
		return apply(ctx, a, n, scope, sel, qf)
	}
}
