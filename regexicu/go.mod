module github.com/dolthub/go-icu-regex

go 1.26.0

require gopkg.in/src-d/go-errors.v1 v1.0.0

require github.com/pkg/errors v0.9.1 // indirect
