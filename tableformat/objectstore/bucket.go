package objectstore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // registers azblob://
	_ "gocloud.dev/blob/gcsblob"   // registers gs://
	"gocloud.dev/blob/s3blob"

	"github.com/lakesql/lakesql/internal/storageloc"
)

// requestTimeout bounds one HTTP request. A request that times out may
// still have taken effect: the Delta log reads a log entry back after any
// failed put (delta.ErrCommitUnknown), so this only bounds waiting.
const requestTimeout = 30 * time.Second

// openBucket opens the bucket of loc. S3 is configured from opts, then the
// environment; GCS and Azure from the environment (their URL openers).
func openBucket(ctx context.Context, loc storageloc.Location, opts Options) (*blob.Bucket, error) {
	switch loc.Scheme {
	case "s3":
		return openS3(ctx, loc, opts)
	case "gs", "azblob":
		// The drivers' default URL openers take their credentials from
		// the environment.
		b, err := blob.OpenBucket(ctx, loc.Scheme+"://"+loc.Bucket)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", loc, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("open %s: unknown scheme %q", loc, loc.Scheme)
}

func openS3(ctx context.Context, loc storageloc.Location, opts Options) (*blob.Bucket, error) {
	var load []func(*awsconfig.LoadOptions) error
	if opts.Region != "" {
		load = append(load, awsconfig.WithRegion(opts.Region))
	}
	if opts.AccessKeyID != "" {
		load = append(load, awsconfig.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(opts.AccessKeyID, opts.SecretAccessKey, opts.SessionToken)))
	}
	// Our RetryPolicy retries, and counts failures for the breaker: the
	// SDK's own retries would hide them.
	load = append(load, awsconfig.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }),
		awsconfig.WithHTTPClient(awshttp.NewBuildableClient().WithTimeout(requestTimeout)))
	cfg, err := awsconfig.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, fmt.Errorf("open %s: AWS configuration: %w", loc, err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
		}
		o.UsePathStyle = opts.PathStyle
		// S3-compatible stores do not all check the SDK's default checksums.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	b, err := s3blob.OpenBucket(ctx, client, loc.Bucket, &s3blob.Options{
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
	})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", loc, err)
	}
	return b, nil
}
