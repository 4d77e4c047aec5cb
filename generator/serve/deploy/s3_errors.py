"""What goes wrong on the way to an S3 bucket, in one line a user can act on (riskapi deploy s3).

botocore names its failures for programmers (NoCredentialsError, EndpointConnectionError, a ClientError
with a code); a user needs to know which bucket and endpoint, and what to do. Every one of these happens
before `current.json` is written, so nothing was switched: the message says so."""
from __future__ import annotations

import contextlib
from typing import Iterator

from ...errors import RiskApiError

INSTALL_S3 = ("riskapi deploy s3 needs boto3: install the s3 extra (pip install 'riskapi[s3]' from a wheel, "
              "pip install -e '.[s3]' in a checkout)")
REFUSED_KEYS = ("InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "AllAccessDisabled", "Forbidden",
                "403")
WRONG_REGION = ("PermanentRedirect", "AuthorizationHeaderMalformed", "IllegalLocationConstraintException", "301")


class DeployError(RiskApiError):
    """A deploy that could not reach or use its target; nothing was switched."""


def where(bucket: str, endpoint: str | None) -> str:
    return f"s3://{bucket} at {endpoint or 'AWS'}"


def explained(error: Exception, bucket: str, endpoint: str | None) -> DeployError | None:
    """Return the one-line DeployError for a botocore failure (None: not one we know, a bug to report)."""
    import botocore.exceptions as failures
    target, unchanged = where(bucket, endpoint), "nothing was switched"
    if isinstance(error, (failures.NoCredentialsError, failures.PartialCredentialsError)):
        return DeployError(f"no S3 credentials for {target}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or "
                           f"AWS_PROFILE, or a profile in ~/.aws/credentials); {unchanged}")
    if isinstance(error, (failures.EndpointConnectionError, failures.ConnectTimeoutError,
                          failures.ReadTimeoutError)):
        return DeployError(f"cannot reach {endpoint or 'AWS S3'} ({error}): check --endpoint-url and the "
                           f"network; {unchanged}")
    if isinstance(error, failures.ClientError):
        code = str(error.response.get("Error", {}).get("Code", ""))
        if code in ("NoSuchBucket", "404"):
            return DeployError(f"there is no bucket {bucket} at {endpoint or 'AWS'}: create it first (aws s3 mb "
                               f"s3://{bucket}) or check --bucket; {unchanged}")
        if code in REFUSED_KEYS:
            return DeployError(f"{target} refused the credentials ({code}): check AWS_ACCESS_KEY_ID and "
                               f"AWS_SECRET_ACCESS_KEY, and that they may write to the bucket; {unchanged}")
        if code in WRONG_REGION:
            return DeployError(f"{target} is in another region ({code}): set AWS_DEFAULT_REGION to the bucket's "
                               f"region; {unchanged}")
        return DeployError(f"{target} answered {code or 'an error'}: {error}; {unchanged}")
    return None


@contextlib.contextmanager
def explaining(bucket: str, endpoint: str | None) -> Iterator[None]:
    """Turn the failures `explained` knows into their one line; the rest pass on unchanged."""
    try:
        yield
    except Exception as error:
        known = explained(error, bucket, endpoint)
        if known is None:
            raise
        raise known from error
