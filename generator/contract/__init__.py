"""What the API is and what every server says: the route table and its grammar, the endpoints, the file
each document lives in, the serving contract (media types, headers, errors, variant folders), encodings
and release ids. Nothing here reads a site, starts a server or builds a release."""
