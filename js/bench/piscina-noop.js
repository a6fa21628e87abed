// The bench's worker for piscina: returns its input.
export default (input) => input;
