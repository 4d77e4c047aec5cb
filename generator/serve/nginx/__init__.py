"""nginx, the reference server: its configuration rendered from the contract and the route table (with
its templates in templates/), the key map, and `nginx -t` on a release before it goes live."""
