#!/usr/bin/env bash
# Written by riskapi deploy cloudfront: bring a CloudFront KeyValueStore holding the previous deploy's
# kvs.json to this one's, with the AWS CLI (v2): the batches of kvs-update/ in order (new and changed
# entries, then `release`, the switch, then the deletions), each call given the store's ETag from the
# one before (If-Match). A first deploy imports kvs.json when the store is created instead.
#   KVS_ARN=arn:aws:cloudfront::ACCOUNT:key-value-store/ID ./update-kvs.sh
set -euo pipefail
cd "$(dirname "$0")"
: "${KVS_ARN:?set KVS_ARN to the ARN of the KeyValueStore (aws cloudfront describe-key-value-store --name NAME)}"
etag=$(aws cloudfront-keyvaluestore describe-key-value-store --kvs-arn "$KVS_ARN" --query ETag --output text)
for batch in kvs-update/*.json; do
  [ -e "$batch" ] || continue
  etag=$(aws cloudfront-keyvaluestore update-keys --kvs-arn "$KVS_ARN" --if-match "$etag" \
         --cli-input-json "file://$batch" --query ETag --output text)
  echo "applied $batch"
done
